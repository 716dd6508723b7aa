{{/* The prefix of every name: "warmmetal" for a release named warmmetal, so the names are deploy/'s. */}}
{{- define "warmmetal.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "warmmetal.api.name" -}}{{ include "warmmetal.fullname" . }}-api{{- end -}}
{{- define "warmmetal.agents.name" -}}{{ include "warmmetal.fullname" . }}-agents{{- end -}}
{{- define "warmmetal.ca.name" -}}{{ include "warmmetal.fullname" . }}-ca{{- end -}}
{{- define "warmmetal.controller.name" -}}{{ include "warmmetal.fullname" . }}-controller{{- end -}}

{{/* Labels on everything. */}}
{{- define "warmmetal.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/part-of: warmmetal
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- with .Values.additionalLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector labels: the name deploy/ selects by, and the release. */}}
{{- define "warmmetal.api.selectorLabels" -}}
app.kubernetes.io/name: {{ include "warmmetal.api.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
{{- define "warmmetal.controller.selectorLabels" -}}
app.kubernetes.io/name: {{ include "warmmetal.controller.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* An image: its repository (by default the one the build makes, mvn -B package -Pimages) and tag (appVersion). */}}
{{- define "warmmetal.image" -}}
{{- $repository := required (printf "%s.image.repository is required: the image the build makes (localhost/warmmetal/warmmetal-%s) or yours (the chart README: Images)" .name .name) .image.repository -}}
{{ $repository }}:{{ .image.tag | default .root.Chart.AppVersion }}
{{- end -}}

{{/* PodDisruptionBudget's API: policy/v1 from Kubernetes 1.21 (v1beta1 is gone in 1.25), policy/v1beta1 before. */}}
{{- define "warmmetal.pdb.apiVersion" -}}
{{- if semverCompare ">=1.21-0" .Capabilities.KubeVersion.Version -}}policy/v1{{- else -}}policy/v1beta1{{- end -}}
{{- end -}}

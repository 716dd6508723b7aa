-- The Kubernetes version of the kubelet a machine's node image carries, as major * 1000 + minor (v1.20.2 → 1020),
-- from its facts (facts.image.kubernetesVersion); NULL where the machine does not say (a host prepared by its
-- operator, a simulated agent). A launch whose join names the control plane's version claims only machines whose
-- kubelet that control plane accepts (the version skew policy) or that do not say: a warm machine that cannot join
-- the cluster asking for it is passed over rather than handed out to fail (R__launch_instances).
-- The pattern bounds the digits, so no facts can make the cast overflow and refuse a machine's enrollment.
ALTER TABLE machines ADD COLUMN kubelet_version integer GENERATED ALWAYS AS (
  ((regexp_match(facts #>> '{image,kubernetesVersion}', '^v?([0-9]{1,3})\.([0-9]{1,3})(\.|$|-|\+)'))[1])::integer * 1000
  + ((regexp_match(facts #>> '{image,kubernetesVersion}', '^v?([0-9]{1,3})\.([0-9]{1,3})(\.|$|-|\+)'))[2])::integer
) STORED;

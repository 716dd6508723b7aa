// A launch through a client generated from openapi.yaml (openapi-typescript types, openapi-fetch calls), run by
// .ci/client-ts.sh against WARMMETAL_API_URL with WARMMETAL_TOKEN: lists shapes, launches one instance with a
// clientToken (twice: the retry must return the same launch), reads it back and terminates it. Prints
// "launched <instanceId>" and exits non-zero on any answer that is not what the contract promises.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

type Instance = components["schemas"]["Instance"];

function fail(message: string, detail?: unknown): never {
  console.error(`launch.ts: ${message}${detail === undefined ? "" : " " + JSON.stringify(detail)}`);
  process.exit(1);
}

function check(ok: boolean, message: string, detail?: unknown): void {
  if (!ok) fail(message, detail);
}

const baseUrl = process.env.WARMMETAL_API_URL ?? fail("WARMMETAL_API_URL is not set");
const token = process.env.WARMMETAL_TOKEN ?? fail("WARMMETAL_TOKEN is not set");
const api = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });

const shapes = await api.GET("/v1/shapes");
check(shapes.response.status === 200 && shapes.data !== undefined, "GET /v1/shapes", shapes.error);
const shape = shapes.data!.items.find((s) => (s.counts["warm"] ?? 0) > 0);
check(shape !== undefined, "no shape has a warm machine", shapes.data);

const clientToken = `client-ts-${Date.now()}`;
const body: components["schemas"]["LaunchRequest"] = { shape: shape!.name, clientToken };
const launched = await api.POST("/v1/instances", { body });
check(launched.response.status === 201 && launched.data !== undefined, "POST /v1/instances", launched.error);
const launch = launched.data!;
check(launch.clientToken === clientToken && launch.instances.length === 1, "the launch", launch);
const instance: Instance = launch.instances[0]!;
check(instance.shape === shape!.name && instance.state === "pending", "the launched instance", instance);

const retried = await api.POST("/v1/instances", { body });
check(retried.response.status === 200 && retried.data?.launchId === launch.launchId,
  "a retry with the same clientToken returns the same launch", retried.data ?? retried.error);

const got = await api.GET("/v1/instances/{instanceId}", { params: { path: { instanceId: instance.id } } });
check(got.response.status === 200 && got.data?.id === instance.id && got.data.machineId === instance.machineId,
  "GET /v1/instances/{instanceId}", got.data ?? got.error);

const ended = await api.DELETE("/v1/instances/{instanceId}", { params: { path: { instanceId: instance.id } } });
const state = ended.data?.state;
check(ended.response.status === 200 && (state === "shutting-down" || state === "terminated"),
  "DELETE /v1/instances/{instanceId}", ended.data ?? ended.error);

console.log(`launched ${instance.id}`);

// Drives a live control plane through a client generated from the committed OpenAPI spec
// (openapi-typescript types + openapi-fetch), as TypeScript automation would. Type-checked with
// `tsc --strict` first: if the spec stops marking always-present fields as required (or types a
// field wrongly), this file no longer compiles. Then run: every step checks what the server says.
//
// Environment: WEIR_URL (base URL), WEIR_TOKEN (an admin bearer token).
import createClient from "openapi-fetch";
import type { components, paths } from "./generated/weir-api.js";

type Tenant = components["schemas"]["Tenant"];
type Problem = components["schemas"]["Problem"];

const baseUrl = process.env["WEIR_URL"] ?? fail("WEIR_URL is not set");
const token = process.env["WEIR_TOKEN"] ?? fail("WEIR_TOKEN is not set");
const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });

function fail(message: string): never {
  throw new Error(message);
}

function expect(condition: boolean, message: string): void {
  if (!condition) {
    fail(message);
  }
}

const name = `ts-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e6)}`;

// Create: 201 with Location and ETag, and a body whose members are all present (no `?.` needed).
const created = await client.POST("/api/v1/tenants", { body: { name, weight: 300 } });
expect(created.response.status === 201, `create answered ${created.response.status}`);
const tenant: Tenant = created.data ?? fail("create returned no body");
const id: string = tenant.id;
const weight: number = tenant.weight;
const maxIops: number | null = tenant.maxIops; // nullable, and always present
expect(weight === 300 && maxIops === null, `created ${JSON.stringify(tenant)}`);
expect(created.response.headers.get("Location")?.endsWith(`/api/v1/tenants/${id}`) === true, "no Location");

// Read, keeping the ETag.
const read = await client.GET("/api/v1/tenants/{tenantId}", { params: { path: { tenantId: id } } });
expect(read.response.status === 200, `read answered ${read.response.status}`);
const etag = read.response.headers.get("ETag") ?? fail("no ETag");
expect(read.data?.name === name, `read ${JSON.stringify(read.data)}`);

// Update with a merge patch under the current ETag.
const mergePatch = { "Content-Type": "application/merge-patch+json" };
const updated = await client.PATCH("/api/v1/tenants/{tenantId}", {
  params: { path: { tenantId: id }, header: { "If-Match": etag } },
  headers: mergePatch,
  body: { weight: 400 },
});
expect(updated.response.status === 200, `update answered ${updated.response.status}`);
const newWeight: number = (updated.data ?? fail("update returned no body")).weight;
expect(newWeight === 400, `updated weight ${newWeight}`);

// The same ETag is stale now: 412, and the error is a typed problem.
const stale = await client.PATCH("/api/v1/tenants/{tenantId}", {
  params: { path: { tenantId: id }, header: { "If-Match": etag } },
  headers: mergePatch,
  body: { weight: 500 },
});
expect(stale.response.status === 412, `stale update answered ${stale.response.status}`);
const problem: Problem = stale.error ?? fail("no problem body");
const status: number = problem.status;
const title: string = problem.title;
expect(status === 412 && title.length > 0, `problem ${JSON.stringify(problem)}`);
expect(stale.response.headers.get("Content-Type")?.startsWith("application/problem+json") === true, "not a problem");

// Capacity-based QoS: a policy of 50 IOPS per GiB gives a 10 GiB volume 500 IOPS, and the
// effective policy says which term produced each number (typed: required, nullable, an enum).
const policyCreated = await client.POST("/api/v1/policies", { body: { name: `${name}-gp`, weight: 100, maxIopsPerGiB: 50, maxIopsFloor: 100 } });
expect(policyCreated.response.status === 201, `policy create answered ${policyCreated.response.status}`);
const policy = policyCreated.data ?? fail("policy create returned no body");
const perGiB: number | null = policy.maxIopsPerGiB;
const basis: "allocated" | "used" | null = policy.capacityBasis;
expect(perGiB === 50 && basis === null, `policy ${JSON.stringify(policy)}`);
const volumeCreated = await client.POST("/api/v1/tenants/{tenantId}/volumes", {
  params: { path: { tenantId: id } },
  body: { name: "v", sizeBytes: 10 * 2 ** 30, policyId: policy.id },
});
expect(volumeCreated.response.status === 201, `volume create answered ${volumeCreated.response.status}`);
const volume = volumeCreated.data ?? fail("volume create returned no body");
const limit: number | null = volume.effectivePolicy.maxIops;
const source: "absolute" | "perGiB" | "floor" | "cap" | null = volume.effectivePolicy.sources.maxIops;
const capacityBytes: number | null = volume.effectivePolicy.capacityBytes;
const usedBytes: number | null = volume.usedBytes;
expect(limit === 500 && source === "perGiB" && capacityBytes === 10 * 2 ** 30 && usedBytes === null,
  `volume ${JSON.stringify(volume.effectivePolicy)}`);
const volumeGone = await client.DELETE("/api/v1/volumes/{volumeId}", { params: { path: { volumeId: volume.id } } });
expect(volumeGone.response.status === 204, `volume delete answered ${volumeGone.response.status}`);
const policyGone = await client.DELETE("/api/v1/policies/{policyId}", { params: { path: { policyId: policy.id } } });
expect(policyGone.response.status === 204, `policy delete answered ${policyGone.response.status}`);

// Delete: 204, and the tenant is gone (a 404 problem).
const current = updated.response.headers.get("ETag") ?? fail("no ETag after update");
const deleted = await client.DELETE("/api/v1/tenants/{tenantId}", {
  params: { path: { tenantId: id }, header: { "If-Match": current } },
});
expect(deleted.response.status === 204, `delete answered ${deleted.response.status}`);
const gone = await client.GET("/api/v1/tenants/{tenantId}", { params: { path: { tenantId: id } } });
expect(gone.response.status === 404 && gone.error?.status === 404, `after delete: ${gone.response.status}`);

console.log(`TypeScript client: created, read, updated, refused a stale ETag (412) and deleted tenant ${id}`);

// Compiled (never run) by cmd/carphoto's TestGeneratedTypeScriptClient
// against schema.d.ts, which openapi-typescript generates from
// site/openapi.json: the types an integrator's TypeScript code uses.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

type VideoJobEnded = components["schemas"]["VideoJobEnded"];
type ErrorBody = components["schemas"]["Error"];

const client = createClient<paths>({ baseUrl: "http://127.0.0.1:8080" });

export async function balance(key: string): Promise<number | undefined> {
  const { data, error } = await client.GET("/v1/account", { headers: { Authorization: `Bearer ${key}` } });
  if (error) throw new Error(`${error.code}: ${error.error}`);
  return data?.credits;
}

export async function job(key: string, id: string): Promise<string | undefined> {
  const { data } = await client.GET("/v1/jobs/{id}", { params: { path: { id } }, headers: { Authorization: `Bearer ${key}` } });
  return data?.status;
}

export function ended(body: string): VideoJobEnded {
  return JSON.parse(body) as VideoJobEnded;
}

export function describe(e: ErrorBody): string {
  return `${e.code}: ${e.error}`;
}

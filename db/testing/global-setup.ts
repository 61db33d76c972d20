import type { TestProject } from "vitest/node";
import { startTestPostgres } from "./test-postgres";

/**
 * Starts one embedded Postgres 18 for the whole integration run and migrates a
 * template database once; every test file clones its own database from it
 * (`useTestDatabase`), so files never see each other's rows.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startTestPostgres();
  project.provide("pgAdminUrl", server.adminUrl);
  project.provide("pgTemplateDatabase", server.templateDatabase);
  return () => server.stop();
}

declare module "vitest" {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplateDatabase: string;
  }
}

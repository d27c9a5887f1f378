/**
 * The last D1 migration this code needs (migrations/): readiness compares it with what the database
 * has applied. test/node/schema-version.test.ts fails when a migration is added and this is not.
 */
export const LATEST_MIGRATION = "0006_ended_bodies.sql";

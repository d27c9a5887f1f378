-- Stored bodies of deliveries still under way when their resource ended (src/delivery/ended-bodies.ts). The end
-- deletes the rest of the resource's R2 prefix at once; these stay until every attempt the delivery can still make is
-- past, then the daily sweep deletes them. Times are Unix milliseconds.
CREATE TABLE ended_bodies (
  key          TEXT PRIMARY KEY,
  delete_after INTEGER NOT NULL
);
CREATE INDEX ended_bodies_due ON ended_bodies (delete_after);

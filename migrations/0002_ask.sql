-- Ask: feature requests, abuse reports, the operator's disabled public addresses.
-- Times are Unix milliseconds. No IP and no credential is stored: client_hash is
-- SHA-256(salt of the UTC day : IP), and the salt is deleted once its day is over.

CREATE TABLE feature_requests (
  id          TEXT PRIMARY KEY,
  title       TEXT NOT NULL,
  body        TEXT,
  contact     TEXT,
  kind        TEXT,
  client_hash TEXT,
  request_id  TEXT NOT NULL,
  created_at  INTEGER NOT NULL
);
-- Keyset pagination, newest first.
CREATE INDEX feature_requests_created ON feature_requests (created_at, id);

CREATE TABLE abuse_reports (
  id          TEXT PRIMARY KEY,
  url         TEXT NOT NULL,
  -- The public address the URL names (API.md §12), so the operator can disable it.
  public_id   TEXT,
  reason      TEXT NOT NULL,
  details     TEXT,
  contact     TEXT,
  client_hash TEXT,
  request_id  TEXT NOT NULL,
  created_at  INTEGER NOT NULL
);
CREATE INDEX abuse_reports_created ON abuse_reports (created_at, id);
CREATE INDEX abuse_reports_public_id ON abuse_reports (public_id) WHERE public_id IS NOT NULL;

-- Read by the public router on every request to /p/{public_id}: a present row means "answer as absent".
CREATE TABLE disabled_public_addresses (
  public_id   TEXT PRIMARY KEY,
  reason      TEXT NOT NULL,
  disabled_at INTEGER NOT NULL
);

-- One random salt per UTC day (YYYY-MM-DD) for client_hash; older days are deleted on the next use.
CREATE TABLE ask_salts (
  day  TEXT PRIMARY KEY,
  salt TEXT NOT NULL
);

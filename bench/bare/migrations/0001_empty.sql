-- The baseline worker uses no D1; this keeps `wrangler d1 migrations apply` uniform across both servers.
SELECT 1;

-- Public addresses (API.md §12): the router maps /p/{public_id} to its resource with one
-- indexed read, joined with the operator's disabled list. NULL for kinds without one.
ALTER TABLE resources ADD COLUMN public_id TEXT;
CREATE UNIQUE INDEX resources_public_id ON resources (public_id) WHERE public_id IS NOT NULL;

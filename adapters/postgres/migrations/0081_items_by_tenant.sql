-- Items, their jobs and the user's tags belong to a user of one tenant (issue 25): the same
-- user id in two tenants is two people, and a URL one tenant saved is nothing to another.
-- Rows saved before this have the tenant '' (no tenant can sign in as it); new rows must name
-- theirs, so the column keeps no default.

ALTER TABLE items ADD COLUMN tenant text NOT NULL DEFAULT '';
ALTER TABLE items ALTER COLUMN tenant DROP DEFAULT;
DROP INDEX items_user_url_live;
CREATE UNIQUE INDEX items_tenant_user_url_live ON items (tenant, user_id, url)
    WHERE deleted_at IS NULL;

ALTER TABLE tagging_jobs ADD COLUMN tenant text NOT NULL DEFAULT '';
ALTER TABLE tagging_jobs ALTER COLUMN tenant DROP DEFAULT;

ALTER TABLE tags ADD COLUMN tenant text NOT NULL DEFAULT '';
ALTER TABLE tags ALTER COLUMN tenant DROP DEFAULT;
ALTER TABLE tags DROP CONSTRAINT tags_user_id_key_key;
ALTER TABLE tags ADD CONSTRAINT tags_tenant_user_key UNIQUE (tenant, user_id, key);

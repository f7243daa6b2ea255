-- The sha256 of each applied migration file (issue 24, item 5; docs/adr/0024). The runner fills
-- it after applying a file, and fills it for rows applied before this column existed the first
-- time it sees them empty; a file whose bytes differ from its row stops the start-up.
ALTER TABLE schema_migrations ADD COLUMN checksum text;

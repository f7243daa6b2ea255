-- Issue 30 item 2: the page's readable text, saved with the item so that the tagger reads the
-- item itself (title, description and text), not only its title. Rows saved before have none.

ALTER TABLE items ADD COLUMN text text NOT NULL DEFAULT '';

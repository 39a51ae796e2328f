-- A connection whose OAuth refresh the source refused needs the user's consent again: the words that
-- say so, shown with the connection until new credentials replace the old ones. Null while all is well.
ALTER TABLE connections ADD COLUMN consent_needed text;

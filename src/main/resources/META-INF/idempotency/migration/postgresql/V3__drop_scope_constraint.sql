-- idempotency-jakarta schema version 3: the record table without its unique constraint on (namespace, principal,
-- idem_key). The primary key, the SHA-256 of those three columns, already keeps one row per key; the second unique
-- index only cost every insert a lookup and a write, and the table its size. Rows and columns are unchanged.
ALTER TABLE idempotency_record DROP CONSTRAINT uq_idempotency_scope;
INSERT INTO idempotency_schema_version (version, description) VALUES (3, 'drop_scope_constraint');

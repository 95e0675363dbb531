-- idempotency-jakarta schema version 2: a table that names the schema's version, so that a deployment can tell an
-- older table from this one (version 1, release 0.1's table, has none). The record table itself is unchanged.
CREATE TABLE idempotency_schema_version (
    version     INTEGER      NOT NULL,
    description VARCHAR(200) NOT NULL,
    CONSTRAINT pk_idempotency_schema_version PRIMARY KEY (version)
);
INSERT INTO idempotency_schema_version (version, description) VALUES (1, 'idempotency_record');
INSERT INTO idempotency_schema_version (version, description) VALUES (2, 'idempotency_schema_version');

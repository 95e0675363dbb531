-- idempotency-jakarta: schema version 3, the record table and its version table, for MariaDB 10.6+ and MySQL 8+ (InnoDB). Times are epoch
-- milliseconds. The binary collation keeps keys case-sensitive.
CREATE TABLE idempotency_record (
    id           VARCHAR(64)  NOT NULL,
    namespace    VARCHAR(200) NOT NULL,
    principal    VARCHAR(200) NOT NULL,
    idem_key     VARCHAR(255) NOT NULL,
    status       VARCHAR(16)  NOT NULL,
    fingerprint  VARCHAR(64)  NOT NULL,
    response     LONGBLOB,
    request_type VARCHAR(100),
    attempts     INTEGER      NOT NULL,
    first_seen   BIGINT       NOT NULL,
    last_seen    BIGINT       NOT NULL,
    completed_at BIGINT,
    expires_at   BIGINT       NOT NULL,
    lease_until  BIGINT,
    owner        VARCHAR(100),
    version      BIGINT       NOT NULL,
    CONSTRAINT pk_idempotency_record PRIMARY KEY (id),
    CONSTRAINT uq_idempotency_scope UNIQUE (namespace, principal, idem_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
CREATE INDEX ix_idempotency_expires ON idempotency_record (expires_at);

-- Schema version 2 (META-INF/idempotency/migration/mariadb/V2__idempotency_schema_version.sql): the version table.
CREATE TABLE idempotency_schema_version (
    version     INTEGER      NOT NULL,
    description VARCHAR(200) NOT NULL,
    CONSTRAINT pk_idempotency_schema_version PRIMARY KEY (version)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
INSERT INTO idempotency_schema_version (version, description) VALUES (1, 'idempotency_record');
INSERT INTO idempotency_schema_version (version, description) VALUES (2, 'idempotency_schema_version');

-- Schema version 3 (META-INF/idempotency/migration/mariadb/V3__drop_scope_constraint.sql): the unique constraint on
-- (namespace, principal, idem_key) created above goes (the primary key keeps one row per key).
ALTER TABLE idempotency_record DROP INDEX uq_idempotency_scope;
INSERT INTO idempotency_schema_version (version, description) VALUES (3, 'drop_scope_constraint');

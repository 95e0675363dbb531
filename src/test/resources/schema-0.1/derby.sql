-- idempotency-jakarta: the record table for Apache Derby 10.15+ (Open Liberty's embedded default).
CREATE TABLE idempotency_record (
    id           VARCHAR(64)  NOT NULL,
    namespace    VARCHAR(200) NOT NULL,
    principal    VARCHAR(200) NOT NULL,
    idem_key     VARCHAR(255) NOT NULL,
    status       VARCHAR(16)  NOT NULL,
    fingerprint  VARCHAR(64)  NOT NULL,
    response     BLOB(16M),
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
);
CREATE INDEX ix_idempotency_expires ON idempotency_record (expires_at);

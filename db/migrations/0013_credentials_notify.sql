-- A notification when a credential changes in a way authentication must see,
-- so the web process can keep API keys in memory (server/auth/api-key-cache.ts)
-- and still refuse a revoked key within milliseconds. The cache empties on every
-- notification, so the payload says only that something changed.
--
-- ApiKeys: any change but "lastUsedAt" (stamped at most once a minute per key
-- by authentication itself, which must not empty the cache it fills). Users and
-- ServiceAccounts: any change to "disabledAt" (a disabled owner's keys stop
-- working), and deletion of any of the three. A key is compared as a whole row
-- minus "lastUsedAt", so a column added to ApiKeys later is covered as it is.
-- Creations need nothing: the cache holds only keys it has read.
CREATE FUNCTION "credentials_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('node_flow_credentials', 'changed');
  RETURN NULL;
END;
$$;

CREATE TRIGGER "ApiKeys_credentials_changed"
  AFTER UPDATE ON "ApiKeys" FOR EACH ROW
  WHEN ((to_jsonb(OLD) - 'lastUsedAt') IS DISTINCT FROM (to_jsonb(NEW) - 'lastUsedAt'))
  EXECUTE FUNCTION "credentials_changed"();
CREATE TRIGGER "ApiKeys_credentials_deleted"
  AFTER DELETE ON "ApiKeys" FOR EACH ROW EXECUTE FUNCTION "credentials_changed"();

CREATE TRIGGER "Users_credentials_changed"
  AFTER UPDATE ON "Users" FOR EACH ROW
  WHEN (OLD."disabledAt" IS DISTINCT FROM NEW."disabledAt" OR OLD."id" IS DISTINCT FROM NEW."id")
  EXECUTE FUNCTION "credentials_changed"();
CREATE TRIGGER "Users_credentials_deleted"
  AFTER DELETE ON "Users" FOR EACH ROW EXECUTE FUNCTION "credentials_changed"();

CREATE TRIGGER "ServiceAccounts_credentials_changed"
  AFTER UPDATE ON "ServiceAccounts" FOR EACH ROW
  WHEN (OLD."disabledAt" IS DISTINCT FROM NEW."disabledAt" OR OLD."id" IS DISTINCT FROM NEW."id"
        OR OLD."namespaceId" IS DISTINCT FROM NEW."namespaceId")
  EXECUTE FUNCTION "credentials_changed"();
CREATE TRIGGER "ServiceAccounts_credentials_deleted"
  AFTER DELETE ON "ServiceAccounts" FOR EACH ROW EXECUTE FUNCTION "credentials_changed"();

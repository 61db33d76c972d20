-- Identity: who may act in which namespace, and the brake on password guessing.
--
-- A user's role in a namespace is the strongest of their direct membership
-- (below) and the roles of the groups they belong to in that namespace
-- ("Groups"."roles", 0001). The instance owner ("Users"."isAdmin") is admin
-- everywhere and needs no rows here.

CREATE TABLE "NamespaceMembers" (
  "namespaceId" UUID NOT NULL REFERENCES "Namespaces" ("id") ON DELETE CASCADE,
  "userId" UUID NOT NULL REFERENCES "Users" ("id") ON DELETE CASCADE,
  -- Weakest first, as in server/auth/principal.ts NAMESPACE_ROLES.
  "role" TEXT NOT NULL CHECK ("role" IN ('viewer', 'operator', 'editor', 'admin')),
  "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY ("namespaceId", "userId")
);
-- "Which namespaces may this user see?" (the namespace picker) runs on every
-- page; the PK only answers the other direction.
CREATE INDEX "NamespaceMembers_user_idx" ON "NamespaceMembers" ("userId");

-- A group's roles are read by every authorization: a misspelt role stored here
-- would silently grant nothing, so the database refuses it at write time.
ALTER TABLE "Groups" ADD CONSTRAINT "Groups_roles_known"
  CHECK ("roles" <@ ARRAY['viewer', 'operator', 'editor', 'admin']::TEXT[]);

-- Failed sign-ins per email (lower-cased), whether or not a user has that
-- email: keying by user would answer "throttled" only for real accounts and so
-- reveal which emails exist. In the database rather than in memory so every
-- web process shares one count and a restart does not reset it. An attempt is
-- counted *before* the password is checked (server/auth/sign-in.ts): counting
-- after would let a burst of parallel guesses all pass the check first.
CREATE TABLE "SignInThrottles" (
  "email" TEXT PRIMARY KEY,
  "failures" INTEGER NOT NULL CHECK ("failures" >= 0),
  "lastFailedAt" TIMESTAMPTZ NOT NULL DEFAULT now()
);

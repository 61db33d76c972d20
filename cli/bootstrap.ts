import { parseArgs } from "node:util";
import { migrate } from "../db/migrator";
import type { Db } from "../db/pool";
import { createApiKey } from "../server/auth/api-keys";
import { checkEmailAddress } from "../server/auth/email-address";
import { IdentityError } from "../server/auth/identity-error";
import { checkPasswordStrength } from "../server/auth/password-policy";
import { setupOwner } from "../server/auth/setup-owner";
import { findNamespaceByName } from "../server/store/namespaces";
import { anyUserExists } from "../server/store/users";
import { UsageError } from "./help";
import { withOperatorDatabase } from "./operator-database";
import type { Env } from "./operator-database";

export interface BootstrapArgs {
  email: string | undefined;
  password: string | undefined;
  namespace: string;
  keyName: string;
  apiKeyOnly: boolean;
}

export function parseBootstrapArgs(argv: string[], env: Env): BootstrapArgs {
  try {
    const { values } = parseArgs({
      args: argv,
      options: {
        email: { type: "string" },
        password: { type: "string" },
        namespace: { type: "string", default: "default" },
        "key-name": { type: "string", default: "bootstrap" },
        "api-key-only": { type: "boolean", default: false },
      },
      strict: true,
      allowPositionals: false,
    });
    const blankToUndefined = (value: string | undefined) => (value?.trim() ? value : undefined);
    return {
      email: blankToUndefined(values.email ?? env.NODE_FLOW_OWNER_EMAIL)?.trim(),
      password: blankToUndefined(values.password ?? env.NODE_FLOW_OWNER_PASSWORD),
      namespace: values.namespace ?? "default",
      keyName: values["key-name"] ?? "bootstrap",
      apiKeyOnly: values["api-key-only"] ?? false,
    };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

const CREATED_BY = "nf bootstrap";

/** A refusal worth one line on stderr and exit 1, not a stack trace. */
class BootstrapRefusal extends Error {
  override name = "BootstrapRefusal";
}

// Progress goes to stderr so stdout carries the key and nothing else:
// `KEY=$(nf bootstrap …)` is the way automation is meant to use this.
const say = (message: string) => process.stderr.write(`${message}\n`);

/**
 * `nf bootstrap`: the first owner and an admin API key without a browser, for
 * automation. Against DATABASE_URL, or the embedded cluster under the data
 * directory (started for the job and stopped after), like `nf migrate`;
 * pending migrations are applied first, as `nf start` would.
 *
 * Safe to re-run: with an owner already present it refuses and creates
 * nothing, unless --api-key-only asks for just another key. The key is printed
 * once, on stdout; only its hash is stored.
 */
export async function runBootstrap(argv: string[], env: Env): Promise<number> {
  const args = parseBootstrapArgs(argv, env);
  if (!args.apiKeyOnly) {
    // Judged before any database is touched, so a bad flag creates nothing.
    if (!args.email) throw new UsageError("bootstrap needs the owner's email: --email or NODE_FLOW_OWNER_EMAIL.");
    if (!args.password) throw new UsageError("bootstrap needs the owner's password: NODE_FLOW_OWNER_PASSWORD (or --password).");
    const problem = checkEmailAddress(args.email) ?? checkPasswordStrength(args.password, { email: args.email });
    if (problem) {
      process.stderr.write(`${problem}\n`);
      return 1;
    }
  }
  return withOperatorDatabase(
    env,
    {
      applicationName: "node-flow-bootstrap",
      say,
      embeddedFix: (dataDir) => `the embedded Postgres is not answering (is \`nf start\` running on ${dataDir}? stop it first)`,
      userErrors: [BootstrapRefusal, IdentityError],
    },
    async (db) => {
      await migrate(db, { onApply: (name) => say(`  applied ${name}`) });
      const key = await bootstrap(db, args);
      process.stdout.write(`${key}\n`);
      return 0;
    },
  );
}

/** Creates the owner (unless --api-key-only) and the key; returns the key. */
async function bootstrap(db: Db, args: BootstrapArgs): Promise<string> {
  const namespace = await findNamespaceByName(db, args.namespace);
  if (!namespace) throw new BootstrapRefusal(`There is no namespace "${args.namespace}".`);
  if (!args.apiKeyOnly) {
    if (await anyUserExists(db)) {
      throw new BootstrapRefusal(
        "This installation already has an owner, so nothing was created. Sign in as the owner, or run `nf bootstrap --api-key-only` for another admin key.",
      );
    }
    // setupOwner checks again under its lock: a setup page submitted meanwhile wins cleanly.
    const owner = await setupOwner(db, { email: args.email ?? "", password: args.password ?? "", via: CREATED_BY });
    say(`Created the owner ${owner.email}.`);
  }
  // A key of no user: it keeps working whoever the owner later becomes, and the
  // audit log records it as made by this tool.
  const created = await createApiKey(db, {
    namespaceId: namespace.id,
    name: args.keyName,
    scopes: ["admin"],
    createdBy: CREATED_BY,
    actor: { type: "system", id: CREATED_BY },
  });
  say(`Created the admin API key ${created.prefix} ("${args.keyName}") for namespace "${namespace.name}". It is printed below, once: store it now.`);
  return created.key;
}

import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { AuthService } from "@flaplab/contracts/auth/v1/auth_pb";
import { clientAddressOf, defineComponent } from "@flaplab/component";
import type { Signer } from "@flaplab/identity";
import { checkScryptParams, DEFAULT_SCRYPT_PARAMS, hashPassword, verifyPassword, type ScryptParams } from "./password.js";
import type { UserStore } from "./store.js";
import {
  AuthThrottle,
  GateFullError,
  HashGate,
  resolveAuthLimits,
  tooMany,
  type AuthLimits,
  type AuthLogger,
} from "./throttle.js";

export const authComponent = defineComponent({
  name: "auth",
  service: AuthService,
  publicMethods: ["Register", "Login"],
  calls: [],
});

export interface PasswordPolicy {
  /** In Unicode code points. */
  readonly minLength: number;
  readonly maxLength: number;
}

export const DEFAULT_PASSWORD_POLICY: PasswordPolicy = { minLength: 8, maxLength: 256 };
export const USERNAME_PATTERN = /^[A-Za-z0-9_.-]{3,32}$/;
export const INVALID_CREDENTIALS = "invalid username or password";

export interface AuthDeps {
  readonly store: UserStore;
  readonly signer: Pick<Signer, "sign">;
  readonly passwordPolicy?: Partial<PasswordPolicy> | undefined;
  /** Cost of new hashes (existing hashes carry their own). Tests use a small N. */
  readonly scrypt?: ScryptParams | undefined;
  /** Epoch milliseconds, for `createdAt`. Defaults to `Date.now`. */
  readonly clock?: (() => number) | undefined;
  /** Throttling of Register and Login and the bound on concurrent hashes (defaults: `DEFAULT_AUTH_LIMITS`). */
  readonly limits?: Partial<AuthLimits> | undefined;
  /** Where throttled calls are logged (pino-compatible). */
  readonly logger?: AuthLogger | undefined;
}

function invalid(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}

function checkUsername(username: string): void {
  if (!USERNAME_PATTERN.test(username)) {
    throw invalid("username must be 3 to 32 characters of letters, digits, '_', '.' or '-'");
  }
}

function codePoints(text: string): number {
  return [...text].length;
}

/** Register and Login: scrypt password hashes in `store`, tokens from `signer`. */
export function createAuth(deps: AuthDeps): ServiceImpl<typeof AuthService> {
  const { store, signer } = deps;
  const policy: PasswordPolicy = { ...DEFAULT_PASSWORD_POLICY, ...deps.passwordPolicy };
  const params = deps.scrypt ?? DEFAULT_SCRYPT_PARAMS;
  const clock = deps.clock ?? Date.now;
  checkScryptParams(params);
  const limits = resolveAuthLimits(deps.limits);
  const throttle = new AuthThrottle(limits, deps.logger);
  const gate = new HashGate(limits.maxConcurrentHashes, limits.maxQueuedHashes, (key) =>
    key.startsWith("address:") ? limits.maxHashesPerAddress : limits.maxHashesPerUser,
  );
  let busy = { atMs: Number.NEGATIVE_INFINITY, unlogged: 0 };
  /** Runs one hash through the gate; a full gate is ResourceExhausted with `retry-after: 1`. */
  const hashing = async <T>(work: () => Promise<T>, address: string | undefined, username: string): Promise<T> => {
    const keys = [`user:${username.toLowerCase()}`];
    if (address !== undefined) keys.push(`address:${address}`);
    try {
      return await gate.run(work, keys);
    } catch (err) {
      if (!(err instanceof GateFullError)) throw err;
      const now = Date.now();
      if (now - busy.atMs >= 5_000) {
        deps.logger?.warn(
          { event: "auth-busy", running: gate.running, waiting: gate.waiting, alsoRefused: busy.unlogged },
          "password checks refused: all hashing slots and queue places taken",
        );
        busy = { atMs: now, unlogged: 0 };
      } else {
        busy.unlogged++;
      }
      throw tooMany("the server is busy checking other passwords", 1000);
    }
  };
  // Unknown users are checked against this so a miss costs the same as a wrong password.
  const dummyHash = hashPassword("flaplab-dummy-password", params);
  dummyHash.catch(() => undefined);

  const checkPassword = (password: string): void => {
    const n = codePoints(password);
    if (n < policy.minLength || n > policy.maxLength) {
      throw invalid(`password must be ${policy.minLength} to ${policy.maxLength} characters`);
    }
  };

  const session = async (username: string) => {
    const { token, expiresAt } = await signer.sign(username);
    return { session: { username, token, expiresAt: timestampFromDate(expiresAt) } };
  };

  return {
    async register(req, ctx) {
      checkUsername(req.username);
      checkPassword(req.password);
      const taken = () => new ConnectError(`username ${req.username} is already taken`, Code.AlreadyExists);
      const address = clientAddressOf(ctx);
      // Counted before the name is looked up: asking whether names exist is throttled like registering them.
      const registration = await throttle.beginRegistration(address);
      if (store.findUser(req.username)) throw taken();
      let passwordHash: string;
      try {
        passwordHash = await hashing(() => hashPassword(req.password, params), address, req.username);
      } catch (err) {
        await registration.cancelled();
        throw err;
      }
      // The insert decides when two registrations of one name race.
      if (!store.addUser({ username: req.username, passwordHash, createdAt: clock() })) throw taken();
      return session(req.username);
    },

    async login(req, ctx) {
      if (req.username === "" || req.password === "") throw invalid("username and password are required");
      checkUsername(req.username);
      if (codePoints(req.password) > policy.maxLength) {
        throw invalid(`password must be ${policy.minLength} to ${policy.maxLength} characters`);
      }
      // Counted before the password is checked, so parallel guesses count at once; given back on success.
      const address = clientAddressOf(ctx);
      const attempt = await throttle.beginLogin(req.username, address);
      const user = store.findUser(req.username);
      let ok: boolean;
      try {
        ok = await hashing(async () => {
          if (!user) {
            await verifyPassword(req.password, await dummyHash);
            return false;
          }
          try {
            return await verifyPassword(req.password, user.passwordHash);
          } catch (err) {
            throw new ConnectError(`stored password hash for ${user.username} is unusable`, Code.Internal, undefined, undefined, err);
          }
        }, address, req.username);
      } catch (err) {
        if (ConnectError.from(err).code === Code.ResourceExhausted) await attempt.cancelled();
        throw err;
      }
      if (!ok || !user) throw new ConnectError(INVALID_CREDENTIALS, Code.Unauthenticated);
      await attempt.succeeded();
      // The registered spelling, whatever case the login used.
      return session(user.username);
    },
  };
}

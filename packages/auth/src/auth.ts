import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { AuthService } from "@flaplab/contracts/auth/v1/auth_pb";
import { defineComponent } from "@flaplab/component";
import type { Signer } from "@flaplab/identity";
import { checkScryptParams, DEFAULT_SCRYPT_PARAMS, hashPassword, verifyPassword, type ScryptParams } from "./password.js";
import type { UserStore } from "./store.js";

export const authComponent = defineComponent({
  name: "auth",
  service: AuthService,
  publicMethods: ["Register", "Login"],
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
    async register(req) {
      checkUsername(req.username);
      checkPassword(req.password);
      const taken = () => new ConnectError(`username ${req.username} is already taken`, Code.AlreadyExists);
      if (store.findUser(req.username)) throw taken();
      const passwordHash = await hashPassword(req.password, params);
      // The insert decides when two registrations of one name race.
      if (!store.addUser({ username: req.username, passwordHash, createdAt: clock() })) throw taken();
      return session(req.username);
    },

    async login(req) {
      if (req.username === "" || req.password === "") throw invalid("username and password are required");
      checkUsername(req.username);
      if (codePoints(req.password) > policy.maxLength) {
        throw invalid(`password must be ${policy.minLength} to ${policy.maxLength} characters`);
      }
      const user = store.findUser(req.username);
      if (!user) {
        await verifyPassword(req.password, await dummyHash);
        throw new ConnectError(INVALID_CREDENTIALS, Code.Unauthenticated);
      }
      let ok: boolean;
      try {
        ok = await verifyPassword(req.password, user.passwordHash);
      } catch (err) {
        throw new ConnectError(`stored password hash for ${user.username} is unusable`, Code.Internal, undefined, undefined, err);
      }
      if (!ok) throw new ConnectError(INVALID_CREDENTIALS, Code.Unauthenticated);
      // The registered spelling, whatever case the login used.
      return session(user.username);
    },
  };
}

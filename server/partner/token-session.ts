/**
 * The partner client's bearer token: the one it sends now, read once from the token store when it
 * starts without one, renewed by a login before its end, and forgotten (here and in the store) when
 * the service refuses it. Calls that find no token while a login is under way wait for that login.
 */
import type { TokenStore } from './token-store.ts';

/** Where a login's token is kept in a TokenStore: one per service and account. */
export function tokenStoreKey(baseUrl: string, email: string | undefined): string {
  return `${new URL(baseUrl).origin}|${email ?? 'token'}`;
}

/** A saved token with its end: `{"token", "expires_at"}`; a bare string (saved before) has no known end. */
export function decodeSaved(saved: string): { token: string; expiresAt: number | null } {
  if (saved.startsWith('{')) {
    try {
      const parsed = JSON.parse(saved) as { token?: unknown; expires_at?: unknown };
      if (typeof parsed.token === 'string') return { token: parsed.token, expiresAt: typeof parsed.expires_at === 'number' ? parsed.expires_at : null };
    } catch {
      // Not ours: read as a bare token.
    }
  }
  return { token: saved, expiresAt: null };
}

export interface TokenSessionOptions {
  /** A token from an earlier login, or null. */
  token: string | null;
  store: TokenStore;
  /** tokenStoreKey of this service and account. */
  key: string;
  now: () => number;
  /** Whether there are credentials to log in with (else an expired token is kept: there is no other). */
  canLogIn: boolean;
  /** The login request itself: a new token and its end (epoch ms). */
  logIn: () => Promise<{ token: string; expiresAt: number }>;
}

export interface TokenSession {
  /** The token to send now, or null. */
  readonly token: string | null;
  /** Makes sure there is a token within its lifetime: the saved one, or a new login. */
  ensure: () => Promise<void>;
  /** Forgets the token, here and in the store (it was refused). */
  forget: () => Promise<void>;
  /** Logs in (once for all the calls that ask meanwhile) and saves the new token. */
  login: () => Promise<void>;
}

export function createTokenSession(options: TokenSessionOptions): TokenSession {
  const { store, key, now } = options;
  let token: string | null = options.token;
  let tokenExpiresAt: number | null = null;
  // The saved token is read once; callers arriving meanwhile wait for that one read.
  let tokenLoad: Promise<void> | null = token !== null ? Promise.resolve() : null;
  let loggingIn: Promise<void> | null = null;

  async function forget(): Promise<void> {
    token = null;
    tokenExpiresAt = null;
    await store.clear(key).catch(() => undefined);
  }

  async function ensure(): Promise<void> {
    if (token !== null && (tokenExpiresAt === null || now() < tokenExpiresAt)) return;
    if (token !== null) {
      // Past its lifetime (5 years, or what the login said): a new one, before the service refuses it.
      if (options.canLogIn) await forget();
    } else {
      tokenLoad ??= store.load(key).then(
        (saved) => {
          if (token === null && saved) ({ token, expiresAt: tokenExpiresAt } = decodeSaved(saved));
        },
        // An unreadable saved token is no token: log in, as on a first start.
        () => undefined,
      );
      await tokenLoad;
      if (token !== null && tokenExpiresAt !== null && now() >= tokenExpiresAt && options.canLogIn) await forget();
    }
    if (token === null) await login();
  }

  function login(): Promise<void> {
    // Calls that find no token while a login is under way wait for that one login.
    loggingIn ??= (async () => {
      const answer = await options.logIn();
      token = answer.token;
      tokenExpiresAt = answer.expiresAt;
      await store.save(key, JSON.stringify({ token: answer.token, expires_at: answer.expiresAt }));
    })().finally(() => {
      loggingIn = null;
    });
    return loggingIn;
  }

  return {
    get token() {
      return token;
    },
    ensure,
    forget,
    login,
  };
}

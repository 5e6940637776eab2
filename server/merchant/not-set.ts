/**
 * "Missing is missing": an option a merchant's code passes that is undefined, null or empty (most come
 * from an environment variable that is not set) is said to be not set, naming where its value comes
 * from, before any check of its format. The merchant's own server does not read `.env` as the proxy
 * does, hence the hint beside a variable's name.
 */

/** Where an option's value comes from: the environment variable it is usually read from, or what it is. */
export type OptionSource = { env: string; what: string } | { what: string };

const ENV_FILE_HINT = 'your server reads a .env file only when told: node --env-file=.env';

/** Undefined, null or the empty string: what an unset variable (or an empty `NAME=` line) gives. */
export function isNotSet(value: unknown): value is undefined | null | '' {
  return value === undefined || value === null || value === '';
}

/** `<where>: <option> is not set (<source>)`, e.g. "createCheckoutClient: apiKey is not set (PIX_API_KEY, …)". */
export function notSetError(where: string, option: string, source: OptionSource): TypeError {
  const from = 'env' in source ? `${source.env}, ${source.what}; ${ENV_FILE_HINT}` : source.what;
  return new TypeError(`${where}: ${option} is not set (${from})`);
}

/** Throws notSetError when `value` is not set. */
export function requireSet(value: unknown, where: string, option: string, source: OptionSource): void {
  if (isNotSet(value)) throw notSetError(where, option, source);
}

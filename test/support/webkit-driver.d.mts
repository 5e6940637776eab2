/** Types of webkit-driver.mjs, which stays plain JavaScript for web-test-runner's config. */
export function freePort(): Promise<number>;

export class WebDriverError extends Error {
  /** The WebDriver error code: "no such element", "javascript error"... */
  readonly error: string | undefined;
}

export class WebKitSession {
  /** Each command's limit, in ms. */
  commandTimeoutMs: number;
  /** What the driver said of the browser when the session opened. */
  capabilities: { browserName?: string; browserVersion?: string; [name: string]: unknown };
  readonly log: string;
  readonly isOpen: boolean;
  request<T = unknown>(method: string, path: string, body?: unknown, timeoutMs?: number): Promise<T>;
  command<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  execute<T = unknown>(script: string, args?: unknown[]): Promise<T>;
  close(): Promise<void>;
}

export function startWebKit(options?: {
  binary?: string | null;
  args?: string[];
  capabilities?: Record<string, unknown>;
  startTimeoutMs?: number;
}): Promise<WebKitSession>;

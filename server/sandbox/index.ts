/** The sandbox on its own: the simulated partner service (its app, its clock, its TLS server). */
export { startSandbox, type RunningSandbox, type SandboxOptions } from './server.ts';
export { DIALECT_NAMES, SANDBOX_DIALECTS, isDialectName, resolveDialect, type DialectName, type SandboxDialect, type StatusNumbering } from './dialects.ts';

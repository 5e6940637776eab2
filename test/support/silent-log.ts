/** A logger that writes nothing: what a test hands a service whose log it does not read. */
import { createLogger } from '../../server/log.ts';

export const silentLog = createLogger({ level: 'silent' });

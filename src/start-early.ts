/** Imported first by src/define.ts: its body runs before lit and the element are evaluated. */
import { startEarly } from './early.ts';

startEarly();

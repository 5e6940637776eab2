/**
 * The partner's BR Codes, checked as the widget checks them before drawing (src/shared/brcode.ts).
 * A code that breaks the manual's rules but can be paid (real banks' codes do) is drawn with
 * warnings; one that cannot is shown as the partner's own image. Either way the operator hears of it
 * here, by the payment's reference, to take up with the partner. The code itself is never logged.
 */
import { checkBrCode, describeBrCodeProblem } from '../../src/shared/brcode.ts';
import type { Logger } from '../log.ts';

/** Logs one warning line (`brcode_warning`) when `pixKey` has warnings or fails the check; nothing when it is clean. Never throws. */
export function logBrCodeWarnings(log: Logger, externalReference: string, pixKey: string): void {
  try {
    const check = checkBrCode(pixKey);
    const problems = check.ok ? check.warnings : [check.at];
    if (problems.length === 0) return;
    log.warn(
      { reference: externalReference, drawn: check.ok, problems: problems.map(describeBrCodeProblem) },
      check.ok
        ? "brcode_warning: the partner's code breaks rules of the BR Code manual; the widget draws it"
        : "brcode_warning: the partner's code fails the BR Code check; the widget shows the partner's image",
    );
  } catch (error) {
    // A diagnostic never costs the payment it describes.
    log.error({ reference: externalReference, err: { message: error instanceof Error ? error.message : String(error) } }, 'brcode_warning: the check failed');
  }
}

/**
 * WebDriver BiDi commands that not every Firefox ESR on a machine of this kind knows.
 *
 * puppeteer-core's `page.setViewport` sends `emulation.setScreenOrientationOverride` along with the
 * viewport; Firefox 140 ESR (Debian 12) answers "unknown command", which fails the whole call and so
 * every page web-test-runner opens. The viewport and the device pixel ratio are set by their own command
 * in the same batch, and nothing here depends on the emulated orientation (the widget's layout follows
 * the viewport's width), so an engine that lacks the command keeps its own orientation instead.
 *
 * The first "unknown command" is remembered for the process; newer ESRs (153 on Debian 12's security
 * updates and Debian 13) still get the override. puppeteer-core tolerates `setTouchOverride` the same
 * way; this does it for the orientation, in both of its module builds (web-test-runner's launcher loads
 * the CommonJS one, the end-to-end tests the ES module one).
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const OPTIONAL_COMMANDS = ['setScreenOrientationOverride'];

/** Whether a BiDi error says the browser does not implement the command. */
export function isUnsupportedCommand(error) {
  const message = String(error?.message ?? error);
  return message.includes('unknown command') || message.includes('unsupported operation');
}

/** Makes puppeteer's optional BiDi emulation commands no-ops in browsers that lack them. */
function tolerate(BrowsingContext) {
  for (const name of OPTIONAL_COMMANDS) {
    const original = BrowsingContext.prototype[name];
    if (typeof original !== 'function' || original.tolerant) continue;
    let unsupported = false;
    const tolerant = async function (...args) {
      if (unsupported) return;
      try {
        return await original.apply(this, args);
      } catch (error) {
        if (!isUnsupportedCommand(error)) throw error;
        unsupported = true;
      }
    };
    tolerant.tolerant = true;
    BrowsingContext.prototype[name] = tolerant;
  }
}

tolerate(require('puppeteer-core/internal/bidi/core/BrowsingContext.js').BrowsingContext);
tolerate((await import('puppeteer-core/internal/bidi/core/BrowsingContext.js')).BrowsingContext);

/**
 * The payments' first screens for pages' heads (`?render=`): the widget's server render, loaded by
 * `load` when a page first asks. It needs the render entry's optional peers, lit and @lit-labs/ssr
 * (the container image installs them); without them, or when a render fails, the page gets its
 * payment without its first screen (the widget draws it), and the log says why, once.
 */
import type { PaymentView } from '../../src/shared/contract.ts';
import type { FirstScreen, FirstScreenLocale } from '../../src/shared/first-screen.ts';
import type { Logger } from '../log.ts';

/** A payment's first screen in a language, its layout guessed from the page's request headers. */
export type Render = (payment: PaymentView, options: { locale: FirstScreenLocale; headers: Headers }) => Promise<FirstScreen>;

export function firstScreenRenderer(logger: Logger, load: () => Promise<{ renderFirstScreen: Render }>): { render: Render } {
  let renderer: Promise<{ renderFirstScreen: Render }> | undefined;
  let told = false;
  return {
    async render(...args) {
      try {
        return await (await (renderer ??= load())).renderFirstScreen(...args);
      } catch (error) {
        if (!told) {
          told = true;
          logger.warn(
            { component: 'first-screen', err: error instanceof Error ? error.message : String(error) },
            "a page's first screen could not be rendered (lit and @lit-labs/ssr must be installed beside pix-checkout-server): pages get their payment without it",
          );
        }
        throw error;
      }
    },
  };
}

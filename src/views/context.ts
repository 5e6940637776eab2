/**
 * The element's parts a screen reads, and the element, for its mode and its events: what the screens
 * of the script (src/views/screens.ts) and of the later chunk are given.
 */
import type { ClipboardController } from '../controllers/clipboard.ts';
import type { WidgetEnvironment } from '../controllers/environment.ts';
import type { LocaleController } from '../controllers/locale.ts';
import type { Session } from '../controllers/session-shape.ts';
import type { CodeOnScreen } from './code.ts';

export interface ScreenContext {
  host: EventTarget & { readonly mode: 'full' | 'link'; requestUpdate(): void };
  /** The copy-and-paste code before the QR code (phones: the customer cannot scan their own screen). */
  copyFirst: boolean;
  i18n: LocaleController;
  session: Session;
  code: CodeOnScreen;
  clipboard: ClipboardController;
  env: WidgetEnvironment;
  copy: () => void;
}

// React 19 JSX (tsc, `"jsx": "react-jsx"`) against the installed package: `import 'pix-checkout/react'`
// is the only declaration this app needs. Every `@ts-expect-error` fails the check if the typing were
// missing (any) or too loose.
import 'pix-checkout/react';
import { useRef } from 'react';
import type { PixCheckout, PixErrorEvent, PixPaidEvent } from 'pix-checkout';

export function PixPayment({ checkoutId, onPaid }: { checkoutId: string; onPaid: (event: PixPaidEvent) => void }) {
  const ref = useRef<PixCheckout>(null);
  return (
    <pix-checkout
      ref={ref}
      id="pay"
      className="payment"
      endpoint="/api"
      checkout={checkoutId}
      locale="pt-BR"
      layout="phone"
      texts={{ paid: 'Obrigado!' }}
      onpix-paid={onPaid}
      onpix-error={(event) => {
        const error: PixErrorEvent = event;
        console.warn(error.detail.code, error.detail.fatal, ref.current?.screen);
      }}
    />
  );
}

export const openAmount = <pix-checkout endpoint="/api" amount={10.5} description="Pedido 1" renewals={0} />;
// @ts-expect-error amount is a number (React 19 sets it as the property)
export const amountAsText = <pix-checkout endpoint="/api" amount="10.50" />;
// @ts-expect-error mode is 'full' or 'link'
export const wrongMode = <pix-checkout endpoint="/api" mode="popup" />;
// @ts-expect-error the listener receives a PixPaidEvent: its detail has no `code`
export const wrongDetail = <pix-checkout onpix-paid={(event) => event.detail.code} />;
// @ts-expect-error texts are the Translation's keys
export const wrongTexts = <pix-checkout texts={{ thanks: 'Obrigado!' }} />;

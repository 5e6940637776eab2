/** @jsxImportSource vue */
// Vue 3 against the installed package: `import 'pix-checkout/vue'` is the only declaration this app
// needs. In TSX (checked here by tsc) and, through GlobalComponents, in .vue templates (vue-tsc reads
// the component's `$props` and `$emit`, checked here as types). Every `@ts-expect-error` fails the
// check if the typing were missing (any) or too loose.
import 'pix-checkout/vue';
import { defineComponent, ref, type GlobalComponents } from 'vue';
import type { PixCheckout, PixErrorEvent, PixPaidEvent } from 'pix-checkout';

export const PixPayment = defineComponent({
  props: { checkoutId: { type: String, required: true } },
  emits: ['paid'],
  setup(props, { emit }) {
    const el = ref<PixCheckout | null>(null);
    return () => (
      <pix-checkout
        ref={el}
        class="payment"
        endpoint="/api"
        checkout={props.checkoutId}
        theme="dark"
        texts={{ paid: 'Obrigado!' }}
        onPix-paid={(event) => {
          const paid: PixPaidEvent = event;
          emit('paid', paid.detail.payment.reference, el.value?.screen);
        }}
      />
    );
  },
});

// @ts-expect-error amount is a number (Vue sets it as the property)
export const amountAsText = <pix-checkout endpoint="/api" amount="10.50" />;
// @ts-expect-error layout is 'auto', 'phone' or 'desktop'
export const wrongLayout = <pix-checkout endpoint="/api" layout="tablet" />;

// What vue-tsc checks a template's <pix-checkout> against.
type Template = InstanceType<GlobalComponents['pix-checkout']>;
export const templateProps: Template['$props'] = { endpoint: '/api', checkout: 'co_1', renewals: 2, class: 'payment' };
// @ts-expect-error a template's :renewals is a number
export const wrongRenewals: Template['$props'] = { renewals: 'two' };
export function templateEvents(template: Template, paid: PixPaidEvent, failed: PixErrorEvent): void {
  template.$emit('pix-paid', paid);
  // @ts-expect-error `@pix-paid` hands its listener a PixPaidEvent
  template.$emit('pix-paid', failed);
}

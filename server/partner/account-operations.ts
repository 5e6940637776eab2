/**
 * The partner account's operations: its tenant (4.1), read once and shared by every create, and the
 * registration of the notification URL (4.8), where the partner sends its webhooks.
 */
import { NotificationUrlRequest, PARTNER_PATHS } from './wire.ts';
import { readNotificationUrl, readTenant } from './read.ts';
import type { Sender } from './sender.ts';
import type { PartnerClient } from './client-types.ts';

export function accountOperations(sender: Sender): Pick<PartnerClient, 'getTenant' | 'setNotificationUrl'> {
  const { send, json, observed, unreadable, checkInput } = sender;
  let tenant: Promise<{ id: string; name: string | null }> | null = null;
  return {
    getTenant() {
      tenant ??= send({
        operation: 'getTenant',
        method: 'GET',
        path: PARTNER_PATHS.getTenant,
        read: (res) => {
          const body = json('getTenant', res);
          const read = readTenant(body);
          observed('getTenant', res, body, read?.found ?? { id: null });
          if (!read) throw unreadable('getTenant', res, 'tenant id');
          return { id: read.id, name: read.name };
        },
        idempotent: true,
      }).catch((error: unknown) => {
        tenant = null;
        throw error;
      });
      return tenant;
    },

    async setNotificationUrl(input) {
      // notify_type only when chosen: the service keeps its own default otherwise.
      const body = checkInput('setNotificationUrl', NotificationUrlRequest, input);
      return send({
        operation: 'setNotificationUrl',
        method: 'PATCH',
        path: PARTNER_PATHS.notificationUrl,
        body,
        read: (res) => {
          // Any 2xx is success, with a body or none (204).
          let answer = null;
          try {
            const parsed = json('setNotificationUrl', res);
            answer = readNotificationUrl(parsed);
            observed('setNotificationUrl', res, parsed, answer.found);
          } catch {
            observed('setNotificationUrl', res, undefined, {});
          }
          return {
            notificationUrl: answer?.notificationUrl ?? body.notification_url,
            notifyType: answer?.notifyType ?? body.notify_type ?? null,
            confirmed: answer?.notificationUrl != null,
          };
        },
        // Setting the same URL twice leaves the same state.
        idempotent: true,
      });
    },
  };
}

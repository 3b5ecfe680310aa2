/** Where a webhook delivery is: waiting or retrying, acknowledged with a 2xx, or given up after a day. */
export const DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

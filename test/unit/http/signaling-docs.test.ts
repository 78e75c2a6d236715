import { describe, expect, it } from 'vitest';
import { messageAnchor, renderSignalingReference } from '../../../src/http/signaling-docs.js';

const hostile = '<script>alert("x")</script>&\'';
const doc = {
  info: { title: hostile, version: '1', description: hostile },
  channels: {
    socket: {
      address: '/signaling',
      messages: {
        'timer.start': { $ref: '#/components/messages/timer.start' },
        'evil.one': {
          name: 'evil.one',
          title: hostile,
          summary: hostile,
          payload: { const: hostile },
          examples: [{ name: hostile, payload: { text: hostile } }],
        },
      },
    },
  },
  operations: { receiveTimer: { action: 'receive', title: hostile, messages: [{ $ref: '#/channels/socket/messages/timer.start' }] } },
  components: { messages: { 'timer.start': { name: 'timer.start', summary: 'Starts a timer.', payload: { type: 'object' } } } },
};

describe('the signaling reference rendered for /docs', () => {
  const html = renderSignalingReference(doc);

  it('names each message anchor after the message, dots as dashes', () => {
    expect(messageAnchor('timer.start')).toBe('signaling-timer-start');
    expect(html).toContain('<article class="message" id="signaling-timer-start">');
    expect(html).toContain('<article class="message" id="signaling-evil-one">');
  });

  it('follows $refs from operations and channels to the messages', () => {
    expect(html).toContain('<li><a href="#signaling-timer-start">timer.start</a>: Starts a timer.</li>');
  });

  it('escapes every value taken from the document', () => {
    expect(html).not.toContain('<script');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;');
  });
});

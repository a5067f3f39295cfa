/** Counting by client network: IPv4 addresses as they are, IPv6 ones by their /64 (daemon/http/client-net.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientNet } from '../../daemon/http/client-net.js';
import { RateLimiter } from '../../daemon/http/rate-limit.js';

describe('clientNet', () => {
  it('keeps an IPv4 address, also when it comes mapped into IPv6', () => {
    assert.equal(clientNet('203.0.113.9'), '203.0.113.9');
    assert.equal(clientNet('::ffff:203.0.113.9'), '203.0.113.9');
    assert.equal(clientNet('::FFFF:198.51.100.7'), '198.51.100.7');
    assert.equal(clientNet('::ffff:c000:221'), '192.0.2.33', 'mapped, written in hexadecimal');
  });

  it('counts an IPv6 address by its /64, whatever its spelling', () => {
    const net = '2001:db8:aa:1::/64';
    for (const ip of ['2001:db8:aa:1::1', '2001:0db8:00aa:0001:ffff:ffff:ffff:fffe', '2001:DB8:AA:1:0:0:0:7', '2001:db8:aa:1:1:2:3:4'])
      assert.equal(clientNet(ip), net, ip);
    assert.equal(clientNet('2001:db8:aa:2::1'), '2001:db8:aa:2::/64');
    assert.equal(clientNet('::1'), '0:0:0:0::/64');
    assert.equal(clientNet('2001:db8::'), '2001:db8:0:0::/64');
    assert.equal(clientNet('fe80::1%eth0'), 'fe80:0:0:0::/64');
    // An IPv4 tail in a non-mapped address is two groups of the host part.
    assert.equal(clientNet('64:ff9b::192.0.2.33'), '64:ff9b:0:0::/64');
  });

  it('leaves what is not an address alone (a unix socket, an empty peer)', () => {
    assert.equal(clientNet(''), '');
    assert.equal(clientNet('unix'), 'unix');
  });
});

describe('the anonymous rate limit', () => {
  it('is one bucket for a whole IPv6 /64 and one per IPv4 address', () => {
    const limiter = new RateLimiter(2);
    const reply = { header: () => reply } as unknown as FastifyReply;
    const from = (ip: string) => () =>
      limiter.check({ ip, routeOptions: { url: '/api/v1/config/auth' } } as unknown as FastifyRequest, reply);
    from('2001:db8:5:1::1')();
    from('2001:db8:5:1::2')();
    assert.throws(from('2001:db8:5:1:abcd::3'), { code: 'RATE_LIMITED' });
    from('2001:db8:5:2::1')();
    from('192.0.2.1')();
    from('192.0.2.2')();
    from('192.0.2.2')();
    assert.throws(from('::ffff:192.0.2.2'), { code: 'RATE_LIMITED' });
  });
});

import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { importToolsFromFile, importTools } from '../../../src/library/importers/index.ts'
import { schemaErrors } from '../../../src/library/schema/validate-schema.ts'

const fixture = (name: string) =>
  new URL(`../../fixtures/formats/${name}`, import.meta.url).pathname

describe('Postman collections', () => {
  it('imports one tool per request, ids from the folders, parameters from the URL and body', async () => {
    const result = await importToolsFromFile(fixture('postman-collection.json'))
    expect(result.format).toBe('postman')
    expect(result.tools.map((tool) => [tool.id, tool.name, tool.description])).toEqual([
      ['orders.list_orders', 'list_orders', "Lists the café's orders, newest first."],
      ['orders.get_order', 'get_order', 'Fetches one order with its items.'],
      ['orders.create_order', 'create_order', 'Places a new order for a customer.'],
      ['orders.refunds.refund_order', 'refund_order', 'Refund order'],
      ['customers.get_customer', 'get_customer', 'Get customer'],
      ['customers.upload_avatar', 'upload_avatar', "Replaces a customer's avatar picture."],
      [
        'crème_brûlée_du_jour',
        'crème_brûlée_du_jour',
        'Asks the menu service which dessert is served today.',
      ],
    ])
    const byId = new Map(result.tools.map((tool) => [tool.id, tool]))
    // Query parameters: optional, with their descriptions; a disabled one is left out.
    expect(byId.get('orders.list_orders')?.parameters).toEqual({
      type: 'object',
      properties: {
        status: { type: 'string', description: 'open, paid or cancelled' },
        limit: { type: 'string', description: 'Most orders to return' },
      },
    })
    // A :variable segment: required, described by url.variable.
    expect(byId.get('orders.get_order')?.parameters).toEqual({
      type: 'object',
      properties: { orderId: { type: 'string', description: "The order's id" } },
      required: ['orderId'],
    })
    // A JSON body: its schema inferred from the example.
    expect(byId.get('orders.create_order')?.parameters).toEqual({
      type: 'object',
      properties: {
        body: {
          type: 'object',
          description: 'The request body (JSON).',
          properties: {
            customerId: { type: 'string' },
            items: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  sku: { type: 'string' },
                  qty: { type: 'integer' },
                  price: { type: 'number' },
                },
              },
            },
            takeaway: { type: 'boolean' },
          },
        },
      },
      required: ['body'],
    })
    // {{orderId}} after the host is a path variable; urlencoded fields are strings.
    expect(byId.get('orders.refunds.refund_order')?.parameters).toEqual({
      type: 'object',
      properties: {
        orderId: { type: 'string' },
        amount: { type: 'string', description: 'Amount in euros' },
        reason: { type: 'string' },
      },
      required: ['orderId'],
    })
    expect(byId.get('orders.refunds.refund_order')?.source).toMatchObject({
      format: 'postman',
      method: 'POST',
      path: '/orders/{{orderId}}/refund',
      folder: 'Orders/Refunds',
    })
    // A request given as a bare URL string is a GET of that URL.
    expect(byId.get('customers.get_customer')?.source).toMatchObject({
      method: 'GET',
      path: '/customers/:customerId',
    })
    expect(byId.get('customers.upload_avatar')?.parameters).toMatchObject({
      properties: { image: { type: 'string', description: 'A file.' } },
    })
    expect(byId.get('crème_brûlée_du_jour')?.parameters).toMatchObject({ required: ['query'] })
    for (const tool of result.tools) expect(schemaErrors(tool.parameters), tool.id).toEqual([])
  })

  it('reads a v2.0 collection (no schema URL needed) and prefixes ids with a namespace', async () => {
    const collection = JSON.parse(await readFile(fixture('postman-collection.json'), 'utf8'))
    collection.info.schema = 'https://schema.getpostman.com/json/collection/v2.0.0/collection.json'
    const v20 = await importTools(JSON.stringify(collection), { fileName: 'cafe.json' })
    expect(v20.format).toBe('postman')
    expect(v20.tools).toHaveLength(7)
    delete collection.info.schema
    const named = await importTools(JSON.stringify(collection), {
      fileName: 'cafe.json',
      namespace: 'cafe',
    })
    expect(named.tools[0]).toMatchObject({ id: 'cafe.orders.list_orders', namespace: 'cafe' })
  })

  it('two requests of one name in one folder fail naming both, as other formats do', async () => {
    const request = { method: 'GET', url: '{{baseUrl}}/ping' }
    const collection = {
      info: { name: 'x' },
      item: [
        { name: 'Ping', request },
        { name: 'ping', request: { ...request, method: 'HEAD' } },
      ],
    }
    await expect(importTools(JSON.stringify(collection), { fileName: 'x.json' })).rejects.toThrow(
      'x.json: tool id "ping" appears twice (operation GET /ping (record 0) and operation HEAD /ping (record 1))',
    )
  })

  it('reads {{variables}} in a JSON body as string values named after them', async () => {
    const raw =
      '{"customerId": {{customerId}}, "note": "{{ note }}", "tag": "a {{b}} c", "qty": 2,\n' +
      ' "lines": [{"sku": {{sku}}}], "text": "a \\" {{quoted}}"}'
    const collection = {
      info: { name: 'x' },
      item: [
        { name: 'Create', request: { method: 'POST', url: '/c', body: { mode: 'raw', raw } } },
        {
          name: 'Whole',
          request: { method: 'POST', url: '/w', body: { mode: 'raw', raw: '{{payload}}' } },
        },
      ],
    }
    const [create, whole] = (await importTools(JSON.stringify(collection), { fileName: 'x.json' }))
      .tools
    const variable = (name: string) => ({
      type: 'string',
      description: `Postman variable {{${name}}}.`,
    })
    expect(create.parameters.properties).toEqual({
      body: {
        type: 'object',
        description: 'The request body (JSON).',
        properties: {
          customerId: variable('customerId'),
          note: variable('note'),
          tag: { type: 'string' },
          qty: { type: 'integer' },
          lines: { type: 'array', items: { type: 'object', properties: { sku: variable('sku') } } },
          text: { type: 'string' },
        },
      },
    })
    expect(whole.parameters.properties).toEqual({ body: variable('payload') })
  })

  it("substitutes the collection's own variables (as defaults), keeps others as placeholders", async () => {
    // A v2.1 export: the collection's variables travel with it; an environment's do not.
    const collection = {
      info: {
        name: 'Shop',
        schema: 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json',
      },
      variable: [
        { key: 'baseUrl', value: 'https://api.shop.example/v2' },
        { key: 'apiVersion', value: 'v1', type: 'string' },
        { key: 'currency', value: 'EUR' },
        { key: 'qty', value: '3' },
        { key: 'express', value: true },
        { key: 'token', value: '' },
        { key: 'region', value: 'eu', disabled: true },
      ],
      item: [
        {
          name: 'Get user',
          request: {
            method: 'GET',
            description: 'Reads a user from {{baseUrl}} (API {{apiVersion}}, {{region}}).',
            url: {
              raw: '{{baseUrl}}/{{apiVersion}}/users/{{userId}}?api_key={{token}}',
              host: ['{{baseUrl}}'],
              path: ['{{apiVersion}}', 'users', '{{userId}}'],
              query: [{ key: 'api_key', value: '{{token}}' }],
            },
          },
        },
        {
          name: 'Create order',
          request: {
            method: 'POST',
            url: '{{baseUrl}}/orders',
            body: {
              mode: 'raw',
              raw: '{"currency": "{{currency}}", "qty": {{qty}}, "express": {{express}}, "token": "{{token}}", "note": "{{envNote}}", "tag": "a {{currency}} b"}',
            },
          },
        },
      ],
    }
    const [getUser, createOrder] = (
      await importTools(JSON.stringify(collection), { fileName: 'shop.json' })
    ).tools
    // Given values are substituted in descriptions; an empty or disabled one is not a value.
    expect(getUser.description).toBe(
      'Reads a user from https://api.shop.example/v2 (API v1, {{region}}).',
    )
    // A path variable the collection gives a value is sent with it unless the caller gives
    // another: optional, with that default; one it does not give stays required.
    expect(getUser.parameters).toEqual({
      type: 'object',
      properties: {
        apiVersion: { type: 'string', default: 'v1' },
        userId: { type: 'string' },
        api_key: { type: 'string' },
      },
      required: ['userId'],
    })
    expect(getUser.source).toMatchObject({ path: '/{{apiVersion}}/users/{{userId}}' })
    const variable = (name: string) => `Postman variable {{${name}}}.`
    expect(createOrder.parameters.properties).toEqual({
      body: {
        type: 'object',
        description: 'The request body (JSON).',
        properties: {
          currency: { type: 'string', description: variable('currency'), default: 'EUR' },
          // Outside a string the value is JSON text: Postman sends the number 3.
          qty: { type: 'integer', description: variable('qty'), default: 3 },
          express: { type: 'boolean', description: variable('express'), default: true },
          token: { type: 'string', description: variable('token') },
          note: { type: 'string', description: variable('envNote') },
          tag: { type: 'string' },
        },
      },
    })
    for (const tool of [getUser, createOrder])
      expect(schemaErrors(tool.parameters), tool.id).toEqual([])
  })
})

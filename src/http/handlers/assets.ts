import type { OperationsByTag } from '../../../generated/operations.js';
import { callerUser } from '../auth.js';
import { attachmentDisposition } from '../content-disposition.js';
import { errors } from '../../errors.js';
import type { Handlers } from '../handler-types.js';
import { pageAnswer, pageQuery } from '../pagination.js';
import type { Services } from './services.js';

export function assetsHandlers({ assets, publicUrl }: Services) {
  return {
    async get_room_assets({ caller, params, query, req }) {
      const page = pageQuery(query);
      return pageAnswer(req, publicUrl, query, page, await assets.list(callerUser(caller).id, params.room_id, page));
    },

    async get_me_assets({ caller, query, req }) {
      const page = pageQuery(query);
      const { body, headers } = pageAnswer(req, publicUrl, query, page, await assets.listOwned(callerUser(caller).id, page));
      return { status: 200, body: { owned_assets: body }, headers };
    },

    async create_room_asset({ caller, params, query, body }) {
      // the HTTP layer hands over the raw bytes of an application/octet-stream body (415 otherwise)
      if (!Buffer.isBuffer(body) || body.length === 0) {
        throw errors.validationFailed([{ field: 'body', code: 'value_required', message: 'The file must not be empty' }]);
      }
      const info = { filename: query.filename, namespace: query.namespace ?? 'uploads' };
      return { status: 201, body: await assets.upload(callerUser(caller).id, params.room_id, info, body) };
    },

    async get_room_asset({ caller, params }) {
      const { asset, bytes } = await assets.download(callerUser(caller).id, params.room_id, params.asset_id);
      return {
        status: 200,
        stream: bytes,
        contentType: 'application/octet-stream',
        headers: {
          'content-disposition': attachmentDisposition(asset.filename),
          'content-length': String(asset.size),
        },
      };
    },

    async delete_room_asset({ caller, params }) {
      await assets.delete(callerUser(caller).id, params.room_id, params.asset_id);
      return { status: 204 };
    },
  } satisfies Handlers<OperationsByTag['assets']>;
}

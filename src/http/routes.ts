/**
 * The route table, built once from the contract at start-up. openapi-backend's own matcher rebuilds
 * every path's RegExp on each request (1.6 ms at 61 paths, measured); this trie resolves an
 * operation in a few microseconds. Static segments win over parameters (`/users/me` before
 * `/users/{user_id}`), with backtracking when a static branch dead-ends.
 */

export interface RouteMatch<T> {
  route: T;
  params: Record<string, string>;
}

interface Node<T> {
  statics: Map<string, Node<T>>;
  param?: { name: string; node: Node<T> };
  routes: Map<string, T>; // by upper-case method
}

const newNode = <T>(): Node<T> => ({ statics: new Map(), routes: new Map() });

export class RouteTable<T> {
  private readonly root: Node<T> = newNode();

  add(method: string, template: string, route: T): void {
    let node = this.root;
    for (const segment of splitPath(template)) {
      const param = /^\{(.+)\}$/.exec(segment);
      if (param) {
        const name = param[1]!;
        if (node.param && node.param.name !== name) {
          throw new Error(`${template}: parameter {${name}} clashes with {${node.param.name}} at the same position`);
        }
        node.param ??= { name, node: newNode() };
        node = node.param.node;
      } else {
        let next = node.statics.get(segment);
        if (!next) node.statics.set(segment, (next = newNode()));
        node = next;
      }
    }
    const key = method.toUpperCase();
    if (node.routes.has(key)) throw new Error(`${key} ${template} is defined twice`);
    node.routes.set(key, route);
  }

  /** The route for method and path; `allowed` lists the methods of a path that exists but not for this method. */
  match(method: string, path: string): RouteMatch<T> | { route: undefined; allowed: string[] } {
    const segments = splitPath(path);
    const params: Record<string, string> = {};
    const node = this.walk(this.root, segments, 0, params);
    if (!node) return { route: undefined, allowed: [] };
    const route = node.routes.get(method.toUpperCase());
    if (route === undefined) return { route: undefined, allowed: [...node.routes.keys()] };
    return { route, params };
  }

  private walk(node: Node<T>, segments: string[], i: number, params: Record<string, string>): Node<T> | undefined {
    if (i === segments.length) return node.routes.size > 0 ? node : undefined;
    const segment = segments[i]!;
    const fixed = node.statics.get(segment);
    if (fixed) {
      const found = this.walk(fixed, segments, i + 1, params);
      if (found) return found;
    }
    if (node.param && segment !== '') {
      const found = this.walk(node.param.node, segments, i + 1, params);
      if (found) {
        params[node.param.name] = safeDecode(segment);
        return found;
      }
    }
    return undefined;
  }
}

function splitPath(path: string): string[] {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed.split('/').slice(1);
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment; // a malformed escape stays as sent; the parameter's schema then rejects it
  }
}

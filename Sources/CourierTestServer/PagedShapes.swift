import Foundation
import Hummingbird

/// Three pages of a list in each shape the generator pages (Docs/Generator.md, "Paging"), at
/// the paths of the golden notes document's paged methods, the page chosen by `pageToken`
/// ("2", "3"; none for the first):
/// - `aggregated` (`/notes/v1/aggregated/notes`): Compute's aggregated list, `items` a map of scopes holding `notes`, beside an
///   `unreachables` array;
/// - `operations` (`/notes/v1/operations`): `operations` beside `unreachable` (as every
///   `operations.list` answers) and `failures`;
/// - `search` (`/notes/v1/notes:search`): two arrays (`matches`, `suggestions`), neither the list's own.
/// Page p holds notes `p-1` and `p-2` (aggregated: one per scope), so a merge is checkable.
public enum PagedShapes {
    public static let pageCount = 3

    static func add(to router: Router<BasicRequestContext>) {
        for (path, shape) in [("/notes/v1/aggregated/notes", "aggregated"), ("/notes/v1/operations", "operations"),
                              ("/notes/v1/notes:search", "search")] {
            router.get(RouterPath(path)) { request, _ in
                let page = Int(request.uri.queryParameters.get("pageToken") ?? "1") ?? 0
                guard (1...pageCount).contains(page), let body = document(shape: shape, page: page) else {
                    throw HTTPError(.badRequest, message: "no page \(page)")
                }
                let data = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
                return Response(status: .ok, headers: [.contentType: "application/json"],
                                body: ResponseBody(byteBuffer: .init(bytes: data)))
            }
        }
    }

    static func document(shape: String, page: Int) -> [String: Any]? {
        let notes: [[String: Any]] = [["id": "\(page)-1", "title": "Note \(page)-1"], ["id": "\(page)-2", "title": "Note \(page)-2"]]
        var body: [String: Any]
        switch shape {
        case "aggregated":
            body = ["items": ["zones/a": ["notes": [notes[0]]],
                              "zones/b": ["notes": [notes[1]]],
                              "zones/empty": ["warning": ["message": "no notes in this scope"]]],
                    "unreachables": ["zones/down-\(page)"]]
        case "operations":
            body = ["operations": notes.map { ["name": $0["id"]!, "done": true] }, "unreachable": ["region-\(page)"],
                    "failures": ["none"]]
        case "search":
            body = ["matches": notes, "suggestions": ["more \(page)"]]
        default:
            return nil
        }
        if page < pageCount { body["nextPageToken"] = String(page + 1) }
        return body
    }
}

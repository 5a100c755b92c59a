import ArgumentParser
import Courier
import Foundation

/// Decodes a ~1 MB collection with each JSON path and reports MB/s (median of `runs`).
struct JSONBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "json", abstract: "JSON decoding throughput, MB/s.")

    @Option(help: "Decodes per path.") var runs = 30
    @Option(help: "Items in the collection.") var items = 4000

    struct CodableNote: Decodable {
        var kind: String
        var id: String
        var title: String
        var body: String
        var labels: [String]
        var starred: Bool
        var views: Int64
        var rating: Double
        var updated: String
        var owner: Owner
        struct Owner: Decodable { var name: String; var email: String; var id: String }
    }

    struct CodableList: Decodable {
        var kind: String
        var nextPageToken: String?
        var items: [CodableNote]
    }

    struct Note: APIObject {
        var json: JSONObject
        var userProperties = UserProperties()
        init(json: JSONObject = [:]) { self.json = json }
        var id: String? { self["id"] }
        var title: String? { self["title"] }
        var body: String? { self["body"] }
        var labels: [String]? { self["labels"] }
        var starred: Bool? { self["starred"] }
        var views: Int64? { self["views"] }
        var rating: Double? { self["rating"] }
        var ownerName: String? { json["owner"]?["name"]?.stringValue }
    }

    struct NoteList: APICollection {
        typealias Item = Note
        var json: JSONObject
        var userProperties = UserProperties()
        init(json: JSONObject = [:]) { self.json = json }
    }

    static func document(items: Int) -> Data {
        var list: [[String: Any]] = []
        for index in 0..<items {
            list.append([
                "kind": "notes#note", "id": "note-\(index)", "title": "Note number \(index) — “quoted” ünïcode",
                "body": "Line one of note \(index).\nLine two with a tab\tand \"escapes\".", "labels": ["work", "todo", "l\(index % 7)"],
                "starred": index % 3 == 0, "views": 9_007_199_254_740_000 + index, "rating": Double(index) / 7.0,
                "updated": "2025-01-\(10 + index % 18)T12:34:56.789Z",
                "owner": ["name": "Owner \(index % 50)", "email": "owner\(index % 50)@example.com", "id": "\(100_000 + index)"],
            ])
        }
        return try! JSONSerialization.data(withJSONObject: ["kind": "notes#noteList", "nextPageToken": "abc", "items": list])
    }

    func run() throws {
        let data = Self.document(items: items)
        let megabytes = Double(data.count) / 1_048_576
        print(String(format: "document: %.2f MB, %d items", megabytes, items))
        func measure(_ name: String, _ body: () throws -> Int) rethrows {
            var times: [Double] = []
            var check = 0
            for _ in 0..<runs {
                let start = DispatchTime.now().uptimeNanoseconds
                check = try body()
                times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            }
            times.sort()
            let median = times[times.count / 2]
            print(String(format: "%-42@ %8.1f MB/s   (median %.2f ms, %d items)", name as NSString, megabytes / median, median * 1000, check))
        }
        try measure("Courier JSONValue parse") {
            let value = try JSONValue(parsing: data)
            return value["items"]?.arrayValue?.count ?? 0
        }
        try measure("Courier typed (parse + read every field)") {
            let list = try NoteList.decode(from: HTTPResponse(status: 200, body: data, url: URL(string: "http://x/")!), limits: .default)
            var count = 0
            for note in list.items where note.id != nil && note.title != nil && note.body != nil && note.labels != nil
                && note.starred != nil && note.views != nil && note.rating != nil && note.ownerName != nil {
                count += 1
            }
            return count
        }
        try measure("Courier typed, iterating the page itself") {
            let list = try NoteList.decode(from: HTTPResponse(status: 200, body: data, url: URL(string: "http://x/")!), limits: .default)
            var count = 0
            for note in list where note.id != nil && note.title != nil && note.body != nil && note.labels != nil
                && note.starred != nil && note.views != nil && note.rating != nil && note.ownerName != nil {
                count += 1
            }
            return count
        }
        try measure("Foundation JSONSerialization") {
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            return (object?["items"] as? [Any])?.count ?? 0
        }
        try measure("Foundation JSONDecoder (Codable structs)") {
            try JSONDecoder().decode(CodableList.self, from: data).items.count
        }
        let parsed = try JSONValue(parsing: data)
        measure("Courier serialize (JSONValue → Data)") { parsed.serialized().count }
        let foundationObject = try JSONSerialization.jsonObject(with: data)
        try measure("Foundation JSONSerialization serialize") { try JSONSerialization.data(withJSONObject: foundationObject).count }
    }
}

import Courier
import Foundation

/// Rows that feed request templates (`--data users.csv`): a CSV file with a header row, or
/// NDJSON (one JSON object a line).
///
/// Which row request `n` of the whole run gets is a function of `n` alone, so shards, which deal
/// request numbers round-robin, take disjoint rows and together use exactly the rows one process
/// would: in ``Mode/sequential`` mode row `n mod count`, in ``Mode/random`` a fixed shuffle of
/// the numbers, in ``Mode/unique`` row `n`, and the run ends when the rows do.
public struct LoadData: Sendable {
    public enum Mode: String, Sendable, CaseIterable {
        /// Row `n mod count`: in order, starting over when the rows run out.
        case sequential
        /// A row drawn for each request, the same draw in every run and shard.
        case random
        /// One row per request, in order; the run ends when the rows run out.
        case unique
    }

    /// Where the rows came from, for messages.
    public let source: String
    public let columns: [String]
    let rows: [[String]]
    public var mode: Mode = .sequential

    public var count: Int { rows.count }

    /// - Throws: ``LoadError/invalidArgument(_:)`` naming the file and the line at fault.
    public init(contentsOf url: URL, mode: Mode = .sequential) throws {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw LoadError.invalidArgument("--data \(url.path): cannot read it: \(error.localizedDescription)")
        }
        let isJSONLines = ["ndjson", "jsonl"].contains(url.pathExtension.lowercased())
        try self.init(text: String(decoding: data, as: UTF8.self), jsonLines: isJSONLines, source: url.path, mode: mode)
    }

    public init(text: String, jsonLines: Bool, source: String, mode: Mode = .sequential) throws {
        self.source = source
        self.mode = mode
        (columns, rows) = jsonLines ? try Self.parseJSONLines(text, source: source) : try Self.parseCSV(text, source: source)
        guard !rows.isEmpty else { throw LoadError.invalidArgument("--data \(source): no rows") }
    }

    /// The row of request `number` of the whole run; nil past the last row in unique mode.
    func row(for number: Int) -> [String]? {
        rowIndex(for: number).map { rows[$0] }
    }

    /// The index of that row.
    func rowIndex(for number: Int) -> Int? {
        switch mode {
        case .sequential: return number % rows.count
        case .unique: return number < rows.count ? number : nil
        case .random:
            // SplitMix64 of the number: uniform, and a function of the number alone.
            var z = UInt64(truncatingIfNeeded: number) &+ 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(rows.count))
        }
    }

    // MARK: Parsing

    /// RFC 4180: commas, double-quoted fields with `""` for a quote, CRLF or LF line ends.
    static func parseCSV(_ text: String, source: String) throws -> ([String], [[String]]) {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var quoted = false, atFieldStart = true, line = 1
        var characters = text.makeIterator()
        var pending: Character? = nil
        func endRecord() {
            record.append(field)
            if !(record.count == 1 && record[0].isEmpty) { records.append(record) } // blank lines
            record = []
            field = ""
        }
        while let character = pending ?? characters.next() {
            pending = nil
            if quoted {
                if character == "\"" {
                    let next = characters.next()
                    if next == "\"" { field.append("\"") } else { quoted = false; pending = next }
                } else {
                    if character == "\n" || character == "\r\n" { line += 1 }
                    field.append(character)
                }
                continue
            }
            switch character {
            case "\"" where atFieldStart:
                quoted = true
                atFieldStart = false
            case "\"":
                throw LoadError.invalidArgument("--data \(source): line \(line): a quote inside an unquoted field")
            case ",":
                record.append(field)
                field = ""
                atFieldStart = true
            case "\n", "\r\n", "\r":
                endRecord()
                line += 1
                atFieldStart = true
            default:
                field.append(character)
                atFieldStart = false
            }
        }
        if quoted { throw LoadError.invalidArgument("--data \(source): a quoted field is not closed") }
        if !field.isEmpty || !record.isEmpty { endRecord() }
        guard let header = records.first else { throw LoadError.invalidArgument("--data \(source): empty, expected a header row") }
        let columns = header.map { $0.trimmingCharacters(in: .whitespaces) }
        if let empty = columns.firstIndex(of: "") { throw LoadError.invalidArgument("--data \(source): column \(empty + 1) has no name") }
        if Set(columns).count != columns.count { throw LoadError.invalidArgument("--data \(source): a column name appears twice") }
        for (index, row) in records.dropFirst().enumerated() where row.count != columns.count {
            throw LoadError.invalidArgument("--data \(source): row \(index + 1) has \(row.count) fields, the header \(columns.count)")
        }
        return (columns, Array(records.dropFirst()))
    }

    /// One JSON object a line; columns are the union of their keys, in order of appearance.
    /// Strings are used as they are, other values as JSON text; a missing key is empty.
    static func parseJSONLines(_ text: String, source: String) throws -> ([String], [[String]]) {
        var columns: [String] = []
        var objects: [JSONObject] = []
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            guard !line.allSatisfy(\.isWhitespace) else { continue }
            guard case .object(let object)? = try? JSONValue(parsing: String(line)) else {
                throw LoadError.invalidArgument("--data \(source): line \(index + 1) is not a JSON object")
            }
            for key in object.keys where !columns.contains(key) { columns.append(key) }
            objects.append(object)
        }
        let rows = objects.map { object in
            columns.map { column -> String in
                switch object[column] {
                case nil, .null?: ""
                case .string(let text)?: text
                case let value?: String(decoding: value.serialized(), as: UTF8.self)
                }
            }
        }
        return (columns, rows)
    }
}

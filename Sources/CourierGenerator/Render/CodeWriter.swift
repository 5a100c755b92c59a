/// Indented lines of Swift, four spaces per level.
struct CodeWriter {
    private(set) var text = ""
    private var level = 0

    mutating func line(_ content: String = "") {
        text += content.isEmpty ? "\n" : String(repeating: "    ", count: level) + content + "\n"
    }

    mutating func block(_ header: String, _ body: (inout CodeWriter) throws -> Void) rethrows {
        line(header + " {")
        level += 1
        try body(&self)
        level -= 1
        line("}")
    }

    /// `///` lines; nothing for no documentation.
    mutating func documentation(_ lines: [String]) {
        for content in lines { line(content.isEmpty ? "///" : "/// " + content) }
    }

    /// A Swift string literal of `text`.
    static func literal(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    result += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }
}

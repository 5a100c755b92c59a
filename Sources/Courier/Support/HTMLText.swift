/// Text for HTML: one escaper for every page Courier writes (`courier load`'s report, a signed
/// POST policy's form).
package enum HTMLText {
    /// `text` safe in element content and in a double- or single-quoted attribute.
    package static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}

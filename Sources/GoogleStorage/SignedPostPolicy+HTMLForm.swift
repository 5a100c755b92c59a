import Foundation

extension SignedPostPolicy {
    /// The HTML form that uploads under this policy: a hidden input per field, sorted by name,
    /// then the file input, which Cloud Storage requires to be the form's last field.
    ///
    /// Every value is escaped for an HTML attribute, so a field holding `"` or `<` cannot end it.
    /// - Parameters:
    ///   - id: the form's `id` attribute, for a script or a style to find it.
    ///   - submitLabel: the submit button's label; `nil` leaves the button out (a script submits).
    public func htmlForm(id: String = "upload", submitLabel: String? = "Upload") -> String {
        var lines = ["<form id=\"\(Self.escape(id))\" action=\"\(Self.escape(url.absoluteString))\" method=\"post\" enctype=\"multipart/form-data\">"]
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            lines.append("  <input type=\"hidden\" name=\"\(Self.escape(name))\" value=\"\(Self.escape(value))\">")
        }
        lines.append("  <input type=\"file\" name=\"file\">")
        if let submitLabel { lines.append("  <button type=\"submit\">\(Self.escape(submitLabel))</button>") }
        lines.append("</form>")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Text safe in a double-quoted attribute and in element content.
    static func escape(_ text: String) -> String {
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

import Courier
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
        var lines = ["<form id=\"\(HTMLText.escape(id))\" action=\"\(HTMLText.escape(url.absoluteString))\" method=\"post\" enctype=\"multipart/form-data\">"]
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
            lines.append("  <input type=\"hidden\" name=\"\(HTMLText.escape(name))\" value=\"\(HTMLText.escape(value))\">")
        }
        lines.append("  <input type=\"file\" name=\"file\">")
        if let submitLabel { lines.append("  <button type=\"submit\">\(HTMLText.escape(submitLabel))</button>") }
        lines.append("</form>")
        return lines.joined(separator: "\n") + "\n"
    }
}

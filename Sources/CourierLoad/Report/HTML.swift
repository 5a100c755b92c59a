import Courier

/// Text made safe for HTML.
enum HTML {
    /// A whole page: no script, nothing loaded from anywhere, light or dark as the reader's system is.
    static func page(title: String, style: String, body: String) -> String {
        """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8"/>
            <meta name="viewport" content="width=device-width, initial-scale=1"/>
            <meta name="color-scheme" content="light dark"/>
            <title>\(escape(title))</title>
            <style>\(style)</style>
            </head>
            <body>
            \(body)
            </body>
            </html>

            """
    }

    static func escape(_ text: String) -> String { HTMLText.escape(text) }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A key file that its group or other users can read or write: ssh refuses to use a private key
/// like that; the worker uses it and warns, at start and in `config check`, naming the app, the
/// file, its mode and the fix.
public enum KeyFileExposure {
    /// The warning for `file` of `app` with `mode` (`st_mode`; only the permission bits are
    /// read), or nil when only its owner has access.
    public static func warning(app: String, file: String, mode: UInt32) -> String? {
        let permissions = mode & 0o777
        let group = permissions & 0o070 != 0, others = permissions & 0o007 != 0
        guard group || others else { return nil }
        let who = group && others ? "its group and other users" : group ? "its group" : "other users"
        let access = permissions & 0o044 != 0 ? "can read it" : group && !others ? "has access to it" : "have access to it"
        let octal = String(permissions, radix: 8)
        return "the key file \(file) of app \"\(app)\" has mode \(String(repeating: "0", count: 4 - octal.count))\(octal): \(who) \(access). Run chmod 600 \(file) so that only the worker's user can (ssh refuses a private key like this)"
    }

    /// The warning for the key file `file` as it is now on disk, or nil.
    public static func warning(app: String, file: String) -> String? {
        mode(of: file).flatMap { warning(app: app, file: file, mode: $0) }
    }

    /// The file's mode, following links as opening it does; nil when it cannot be looked at (the
    /// error that it cannot be read is reported elsewhere).
    static func mode(of file: String) -> UInt32? {
        var info = stat()
        guard stat(file, &info) == 0 else { return nil }
        return UInt32(info.st_mode)
    }

    /// Warnings for each key file of `app` that others may read: the APNs .p8 key, the TLS client
    /// key (or the certificate file that holds it) or PKCS#12 file, the VAPID private key and the
    /// FCM service account, when they come from a file.
    static func findings(for app: AppEntry, file path: String, mode: (String) -> UInt32? = mode(of:)) -> [ConfigurationFinding] {
        app.keyFiles.compactMap { field, keyFile in
            guard let mode = mode(keyFile), let message = warning(app: app.name, file: keyFile, mode: mode) else { return nil }
            let full = "\(app.field).\(field)"
            return ConfigurationFinding(.warning, file: path, line: app.lines[full] ?? app.lines[app.field], field: full, message: message)
        }
    }
}

extension AppEntry {
    /// The files holding the app's private key, each with the field that names it.
    var keyFiles: [(field: String, path: String)] {
        switch credentials {
        case let .token(.file(path), _, _): [("token.key_file", path)]
        case let .certificate(certificateFile, keyFile, _):
            // Without key_file the certificate's file holds the key too.
            [(keyFile == nil ? "certificate.cert_file" : "certificate.key_file", keyFile ?? certificateFile)]
        case let .pkcs12(path, _): [("pkcs12.file", path)]
        case let .vapid(.file(path), _, _): [("vapid.private_key", path)]
        case let .serviceAccount(.file(path)): [("service_account", path)]
        case .token, .vapid, .serviceAccount: []
        }
    }
}

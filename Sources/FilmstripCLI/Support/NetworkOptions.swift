import ArgumentParser
import Filmstrip

/// `--deny-private-addresses`, for commands that fetch URLs.
struct NetworkOptions: ParsableArguments {
    @Flag(
        help: ArgumentHelp(
            "Refuse loopback, link-local and private addresses (checked after DNS, for every redirect too).",
            discussion: "For servers that run this command on URLs their users give them."))
    var denyPrivateAddresses = false

    /// The address policy the flag asks for.
    var policy: AddressPolicy { denyPrivateAddresses ? .publicOnly : .any }

    /// `loading` with the policy applied.
    func applied(to loading: LoadingConfiguration) -> LoadingConfiguration {
        var loading = loading
        loading.addressPolicy = policy
        return loading
    }
}

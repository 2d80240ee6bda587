@_exported import GQLCore
@_exported import GQLCrypto

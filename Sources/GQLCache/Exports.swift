@_exported import GQLNet
@_exported import GQLStore

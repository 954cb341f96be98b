import { Anchor } from '@mantine/core'
import { Link } from 'react-router'
import { Empty } from '../components/States'

export default function NotFound() {
  return (
    <Empty
      title="Page not found"
      action={
        <Anchor component={Link} to="/">
          Go to the start page
        </Anchor>
      }
    >
      This address does not match any page of Burrow.
    </Empty>
  )
}
